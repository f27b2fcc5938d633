"""deploy/ agrees with the code: every manifest parses, and ports, probes and BOAF_* names match the settings.

Every Kubernetes object in deploy/k8s is also validated, offline, against the schemas of
Kubernetes ``KUBERNETES_VERSION`` that kubernetes-validate ships inside its package, in
strict mode (a field the API does not know is an error); the Kustomization, which is no
API object, is checked by shape. Images are ``boaf:<version>`` (serving) and
``boaf-batch:<version>`` (Dask and retraining), ``<version>`` being pyproject.toml's.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from kubernetes_validate.utils import SchemaNotFoundError, all_versions

from boaf.models import registry
from boaf.models.classifier import load_classifier
from boaf.service.core.memory import reload_memory_mb
from boaf.service.core.settings import MIB, Settings, env_name, env_names
from boaf.service.grpc.server import HEALTH_SERVICES, SERVICE_NAME

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
MANIFESTS = sorted(K8S.glob("*.yaml"))
ALL_VARIABLES = set(env_names())


def documents() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in MANIFESTS:
        docs += [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    return docs


def find(kind: str, name: str) -> dict[str, Any]:
    (doc,) = [d for d in documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    return doc


def config() -> dict[str, str]:
    return find("ConfigMap", "boaf-config")["data"]


def service_container() -> dict[str, Any]:
    (container,) = find("Deployment", "boaf")["spec"]["template"]["spec"]["containers"]
    return container


def container_port(container: dict[str, Any], name: str) -> int:
    (port,) = [p["containerPort"] for p in container["ports"] if p["name"] == name]
    return int(port)


@pytest.mark.parametrize("path", MANIFESTS, ids=[p.name for p in MANIFESTS])
def test_every_manifest_parses_into_named_objects(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    assert docs
    for doc in docs:
        assert doc["apiVersion"] and doc["kind"]
        if doc["kind"] != "Kustomization":
            assert doc["metadata"]["name"]


def test_kustomization_lists_files_that_exist() -> None:
    for resource in find_kustomization()["resources"]:
        assert (K8S / resource).is_file(), resource


def find_kustomization() -> dict[str, Any]:
    return yaml.safe_load((K8S / "kustomization.yaml").read_text(encoding="utf-8"))


def test_the_config_map_holds_only_known_settings_and_they_parse() -> None:
    data = config()
    assert set(data) <= ALL_VARIABLES, set(data) - ALL_VARIABLES
    assert all(isinstance(v, str) for v in data.values()), "ConfigMap values must be strings"
    settings = Settings.from_env(data)
    assert settings.host == "0.0.0.0", "a pod must listen beyond loopback"


def test_container_ports_and_probes_match_the_settings() -> None:
    settings = Settings.from_env(config())
    container = service_container()
    assert container_port(container, "grpc") == settings.port
    assert container_port(container, "metrics") == settings.metrics_port
    assert container_port(container, "http") == settings.http_port
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["grpc"]["port"] == settings.port, probe
    assert container["startupProbe"]["grpc"]["service"] == SERVICE_NAME
    assert container["readinessProbe"]["grpc"]["service"] == SERVICE_NAME
    assert container["envFrom"] == [{"configMapRef": {"name": "boaf-config"}}]
    annotations = find("Deployment", "boaf")["spec"]["template"]["metadata"]["annotations"]
    assert int(annotations["prometheus.io/port"]) == settings.metrics_port


def test_the_numba_cache_is_a_writable_volume_filled_from_the_image() -> None:
    pod = find("Deployment", "boaf")["spec"]["template"]["spec"]
    env = {e["name"]: e["value"] for e in service_container()["env"]}
    mounts = {m["mountPath"]: m["name"] for m in service_container()["volumeMounts"]}
    volume = mounts[env["NUMBA_CACHE_DIR"]]
    assert {"name": volume, "emptyDir": {}} in pod["volumes"]
    (init,) = [c for c in pod["initContainers"] if c["name"] == "numba-cache"]
    assert init["volumeMounts"][0] == {"name": volume, "mountPath": env["NUMBA_CACHE_DIR"]}
    assert "/opt/numba-cache/." in init["command"]
    assert "NUMBA_CACHE_DIR=/opt/numba-cache" in dockerfile()


def test_pods_get_longer_to_stop_than_the_shutdown_grace() -> None:
    settings = Settings.from_env(config())
    pod = find("Deployment", "boaf")["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] > settings.shutdown_grace_s


def test_the_service_runs_as_non_root() -> None:
    pod = find("Deployment", "boaf")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert service_container()["securityContext"]["allowPrivilegeEscalation"] is False


@pytest.mark.parametrize("name", ["boaf", "boaf-headless"])
def test_services_select_the_pods_and_target_named_ports(name: str) -> None:
    service = find("Service", name)
    deployment = find("Deployment", "boaf")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    port_names = {p["name"] for p in service_container()["ports"]}
    for port in service["spec"]["ports"]:
        assert port["targetPort"] in port_names
    grpc = [p for p in service["spec"]["ports"] if p["name"] == "grpc"]
    assert grpc[0]["port"] == Settings.from_env(config()).port


def test_the_service_exposes_http_beside_grpc() -> None:
    (http,) = [p for p in find("Service", "boaf")["spec"]["ports"] if p["name"] == "http"]
    assert http["port"] == Settings.from_env(config()).http_port
    assert http["targetPort"] == "http"


def test_deployments_select_their_own_pods() -> None:
    for doc in documents():
        if doc["kind"] == "Deployment":
            selector = doc["spec"]["selector"]["matchLabels"]
            assert selector.items() <= doc["spec"]["template"]["metadata"]["labels"].items(), doc["metadata"]["name"]


def test_the_autoscaler_targets_the_deployment() -> None:
    hpa = find("HorizontalPodAutoscaler", "boaf")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "boaf"}
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]


def test_the_retrain_job_runs_boaf_retrain_and_exports_against_the_dask_scheduler() -> None:
    job = find("Job", "boaf-retrain")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    script = " ".join(container["args"])
    address = {e["name"]: e.get("value") for e in container["env"]}["DASK_SCHEDULER"]
    scheduler = find("Service", "boaf-dask-scheduler")
    host, port = re.fullmatch(r"tcp://([\w-]+):(\d+)", address).groups()  # type: ignore[union-attr]
    assert host == scheduler["metadata"]["name"]
    assert int(port) in {p["port"] for p in scheduler["spec"]["ports"]}
    assert "boaf retrain" in script
    assert "boaf features export" in script
    assert script.count('--scheduler "$DASK_SCHEDULER"') == 3
    workers = find("Deployment", "boaf-dask-worker")["spec"]["template"]["spec"]["containers"][0]
    assert address in workers["command"]
    claims = {v["persistentVolumeClaim"]["claimName"] for v in job["spec"]["template"]["spec"]["volumes"]}
    assert claims <= {d["metadata"]["name"] for d in documents() if d["kind"] == "PersistentVolumeClaim"}


# ---------------------------------------------------------------- the model volume


def claim_mounted_at(pod: dict[str, Any], container: dict[str, Any], path: str) -> tuple[str, dict[str, Any]]:
    """The PersistentVolumeClaim ``container`` mounts at ``path``, and the mount."""
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == path]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    return volume["persistentVolumeClaim"]["claimName"], mount


def model_dir_from_the_config_map(container: dict[str, Any]) -> None:
    (entry,) = [e for e in container["env"] if e["name"] == "BOAF_MODEL_DIR"]
    assert entry["valueFrom"]["configMapKeyRef"] == {"name": "boaf-config", "key": "BOAF_MODEL_DIR"}


def retrain_job() -> tuple[dict[str, Any], dict[str, Any], str]:
    """The retrain Job's pod, its container and its script."""
    pod = find("Job", "boaf-retrain")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    return pod, container, " ".join(container["args"])


def test_the_retrain_job_publishes_to_the_volume_the_serving_pods_read_at_boaf_model_dir() -> None:
    settings = pod_settings()
    assert settings.model_dir is not None and settings.model_poll_s > 0, "the pods serve a model root they watch"
    model_dir = str(settings.model_dir)
    pod = find("Deployment", "boaf")["spec"]["template"]["spec"]
    claim, mount = claim_mounted_at(pod, service_container(), model_dir)
    assert mount.get("readOnly") is True, "the serving pods only read the model root"
    (seed,) = [c for c in pod["initContainers"] if c["name"] == "seed-models"]
    assert claim_mounted_at(pod, seed, model_dir)[0] == claim
    model_dir_from_the_config_map(seed)

    job_pod, job, script = retrain_job()
    assert claim_mounted_at(job_pod, job, model_dir)[0] == claim, "the Job writes where the pods read"
    model_dir_from_the_config_map(job)
    assert script.index("boaf retrain") < script.index("registry.publish(") < script.index("boaf dataset generate")
    assert "os.environ['BOAF_MODEL_DIR']" in script

    volume = find("PersistentVolumeClaim", claim)
    assert volume["spec"]["accessModes"] == ["ReadWriteMany"], "one writer (the Job) and every serving pod"
    kustomized = [
        d for r in find_kustomization()["resources"] for d in yaml.safe_load_all((K8S / r).read_text("utf-8"))
    ]
    assert volume in kustomized, "kubectl apply -k deploy/k8s creates the model volume with the service"


def run_python(code: str, model_dir: Path) -> None:
    env = {**os.environ, "BOAF_MODEL_DIR": str(model_dir)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, timeout=60)


def test_the_seed_and_publish_steps_of_the_manifests_install_loadable_versions(tmp_path: Path) -> None:
    # The scripts as the manifests hold them, run against temporary directories.
    models = tmp_path / "models"
    pod = find("Deployment", "boaf")["spec"]["template"]["spec"]
    (seed,) = [c for c in pod["initContainers"] if c["name"] == "seed-models"]
    run_python(seed["args"][0], models)
    assert registry.installed_version(models) == "baked"
    assert load_classifier(models).version == load_classifier().version
    (models / "CURRENT").write_text("other\n", encoding="utf-8")
    run_python(seed["args"][0], models)  # a volume that has a version is left alone
    assert registry.installed_version(models) == "other"

    work = tmp_path / "work-models"
    shutil.copytree(registry.default_root(), work / "v2")
    (work / "CURRENT").write_text("v2\n", encoding="utf-8")
    (publish,) = re.findall(r'python -c "(.*?)";', retrain_job()[2])
    run_python(publish.replace("/work/models", str(work)), models)
    assert registry.installed_version(models) == "v2"
    assert load_classifier(models).version == load_classifier(work).version
    assert not [p for p in models.iterdir() if p.name.endswith(".staging")]


def test_every_boaf_variable_named_anywhere_in_deploy_is_a_setting() -> None:
    for path in [*MANIFESTS, DEPLOY / "Dockerfile", DEPLOY / "README.md"]:
        named = set(re.findall(r"\bBOAF_[A-Z_]+\b", path.read_text(encoding="utf-8")))
        assert named <= ALL_VARIABLES, f"{path.name}: {named - ALL_VARIABLES}"


# ---------------------------------------------------------------- the image


def dockerfile() -> str:
    return (DEPLOY / "Dockerfile").read_text(encoding="utf-8")


def test_the_image_is_multi_stage_and_runs_as_a_non_root_user() -> None:
    text = dockerfile()
    assert len(re.findall(r"^FROM ", text, re.MULTILINE)) >= 2
    (user,) = re.findall(r"^USER (\S+)", text, re.MULTILINE)
    assert user.split(":")[0] not in {"0", "root"}
    assert "COPY --from=build" in text


def test_the_image_bakes_and_checks_the_model_and_serves_on_the_settings_ports() -> None:
    text = dockerfile()
    assert "COPY models models" in text
    assert "boaf serve --check" in text
    env = dict(re.findall(r"\b(BOAF_[A-Z_]+)=(\S+)", text))
    settings = Settings.from_env(env)
    exposed = {int(p) for p in re.findall(r"^EXPOSE (.+)$", text, re.MULTILINE)[0].split()}
    assert exposed == {settings.port, settings.http_port, settings.metrics_port}
    assert settings.host == "0.0.0.0"
    assert re.search(r'^CMD \["serve"\]', text, re.MULTILINE)
    assert "USER 10001" in text
    deployment_user = find("Deployment", "boaf")["spec"]["template"]["spec"]["securityContext"]["runAsUser"]
    assert f"USER {deployment_user}" in text


# ---------------------------------------------------------------- schemas, offline

# The oldest Kubernetes the manifests are for: a field newer than it is an error. Its schemas
# ship inside kubernetes-validate (the dev extra asks for >=1.30), so validation needs no network.
KUBERNETES_VERSION = "1.30"
OBJECT_FILES = [p for p in MANIFESTS if p.name != "kustomization.yaml"]


def validate(doc: dict[str, Any]) -> None:
    """Validate one object against the strict schemas of ``KUBERNETES_VERSION``: an unknown field is an error."""
    used = kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    assert used == KUBERNETES_VERSION, f"validated against Kubernetes {used}, not {KUBERNETES_VERSION}"


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to reach the network fails: the schemas must come from the installed package."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access while validating: {args[1:]}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_kubernetes_validate_ships_the_pinned_version_strict() -> None:
    assert f"{KUBERNETES_VERSION}.0" in all_versions(), f"kubernetes-validate ships {sorted(set(all_versions()))}"
    package = Path(kubernetes_validate.__file__).parent
    assert (
        package / "kubernetes-json-schema" / f"v{KUBERNETES_VERSION}.0-local-strict" / "_definitions.json"
    ).is_file()


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("path", OBJECT_FILES, ids=[p.name for p in OBJECT_FILES])
def test_every_object_conforms_to_the_pinned_kubernetes_schemas(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    assert docs
    errors = []
    for doc in docs:
        where = f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
        try:
            validate(doc)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{where}: {'.'.join(map(str, exc.path)) or '<root>'}: {exc.message}")
        except SchemaNotFoundError as exc:  # a kind or apiVersion this Kubernetes does not serve
            errors.append(f"{where}: {exc.message}")
    assert not errors, "\n".join(errors)


def first_container(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["spec"]["template"]["spec"]["containers"][0]  # type: ignore[no-any-return]


Breakage = Callable[[dict[str, Any]], object]
BROKEN: dict[str, tuple[str, str, Breakage, str]] = {
    # an unknown field, as a typo or at the wrong level: strict mode alone refuses these
    "unknown container field": (
        "Deployment",
        "boaf",
        lambda d: first_container(d).update(imagePullPolicyy="Always"),
        "'imagePullPolicyy' was unexpected",
    ),
    "unknown probe field": (
        "Deployment",
        "boaf",
        lambda d: first_container(d)["readinessProbe"]["grpc"].update(serivce=SERVICE_NAME),
        "'serivce' was unexpected",
    ),
    "pod field on the Job": (
        "Job",
        "boaf-retrain",
        lambda d: d["spec"].update(restartPolicy="Never"),
        "'restartPolicy' was unexpected",
    ),
    # a wrong type
    "replicas as a string": ("Deployment", "boaf", lambda d: d["spec"].update(replicas="2"), "is not of type"),
    "unquoted ConfigMap number": (
        "ConfigMap",
        "boaf-config",
        lambda d: d["data"].update(BOAF_PORT=50051),
        "is not of type",
    ),
    "probe period as a string": (
        "Deployment",
        "boaf",
        lambda d: first_container(d)["livenessProbe"].update(periodSeconds="10s"),
        "is not of type",
    ),
    # a missing required field
    "container without a name": (
        "Deployment",
        "boaf",
        lambda d: first_container(d).pop("name"),
        "'name' is a required",
    ),
    "service port without a port": (
        "Service",
        "boaf",
        lambda d: d["spec"]["ports"][0].pop("port"),
        "'port' is a required",
    ),
    "deployment without a selector": (
        "Deployment",
        "boaf-dask-worker",
        lambda d: d["spec"].pop("selector"),
        "'selector' is a required",
    ),
}


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("case", BROKEN)
def test_the_validator_refuses_a_broken_copy(case: str) -> None:
    kind, name, breakage, message = BROKEN[case]
    original = find(kind, name)
    validate(original)  # the copy fails because of the breakage alone
    broken = copy.deepcopy(original)
    breakage(broken)
    with pytest.raises(kubernetes_validate.ValidationError) as caught:
        validate(broken)
    assert message in caught.value.message


@pytest.mark.usefixtures("offline")
def test_the_validator_refuses_an_api_version_the_pinned_kubernetes_no_longer_serves() -> None:
    hpa = copy.deepcopy(find("HorizontalPodAutoscaler", "boaf"))
    hpa["apiVersion"] = "autoscaling/v2beta2"  # removed in Kubernetes 1.26
    with pytest.raises(SchemaNotFoundError):
        validate(hpa)


KUSTOMIZATION_FIELDS = {"apiVersion", "kind", "resources", "images"}
IMAGE_FIELDS = {"name", "newName", "newTag", "digest"}


def test_the_kustomization_has_the_shape_kustomize_reads() -> None:
    docs = [d for d in yaml.safe_load_all((K8S / "kustomization.yaml").read_text(encoding="utf-8")) if d is not None]
    (kustomization,) = docs
    assert kustomization["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    assert kustomization["kind"] == "Kustomization"
    assert set(kustomization) <= KUSTOMIZATION_FIELDS, set(kustomization) - KUSTOMIZATION_FIELDS
    resources = kustomization["resources"]
    assert resources and all(isinstance(r, str) for r in resources)
    assert len(set(resources)) == len(resources), "a resource listed twice"
    assert set(resources) <= {p.name for p in OBJECT_FILES}, "resources are manifests of API objects"
    images = kustomization["images"]
    assert all(isinstance(i, dict) and "name" in i and set(i) <= IMAGE_FIELDS for i in images), images
    assert len({i["name"] for i in images}) == len(images), "an image listed twice"
    assert not any("newTag" in i and "digest" in i for i in images), "newTag and digest exclude each other"


# ---------------------------------------------------------------- the settings, in full


# Settings the ConfigMap leaves at their default, and why; every other one it sets.
LEFT_AT_DEFAULT = {
    "grpc_enabled": "on: the probes are gRPC health checks",
    "http_enabled": "on: the Service exposes the HTTP/JSON port",
    "tls_cert": "unset: no TLS in the pod",
    "tls_key": "unset: no TLS in the pod",
    "allowed_hosts": "unset: bound to 0.0.0.0, so any Host (set it to the ingress's names where one is used)",
    "cors_origins": "unset: no browser page on another origin calls the API",
    "api_tokens": "unset: tokens are secrets; deploy/README.md mounts a Secret as api_tokens_file",
    "api_tokens_file": "unset: no tokens unless a Secret is mounted (deploy/README.md)",
    "otel": "off: the serving image has no OTLP exporter (the otel extra); deploy/README.md says how to trace",
}
FRONT_END_PORTS = {"grpc": "port", "http": "http_port", "metrics": "metrics_port"}
HPA_METRICS = {"cpu"}


def pod_environment() -> dict[str, str]:
    """The service container's environment as far as the manifests set it: the ConfigMap, then its own env."""
    own = {e["name"]: e["value"] for e in service_container().get("env", []) if "value" in e}
    return {**config(), **own}


def pod_settings() -> Settings:
    return Settings.from_env(pod_environment())


def test_the_config_map_sets_every_setting_but_those_left_at_their_default() -> None:
    left = {env_name(name) for name in LEFT_AT_DEFAULT}
    assert left <= ALL_VARIABLES, left - ALL_VARIABLES
    assert not left & set(pod_environment()), "a setting is both set and listed as left at its default"
    missing = ALL_VARIABLES - left - set(config())
    assert not missing, f"settings the ConfigMap neither sets nor lists in LEFT_AT_DEFAULT: {sorted(missing)}"
    defaults = Settings()
    assert all(getattr(pod_settings(), name) == getattr(defaults, name) for name in LEFT_AT_DEFAULT)


def test_every_boaf_variable_of_every_container_is_a_setting_and_config_maps_exist() -> None:
    config_maps = {d["metadata"]["name"] for d in documents() if d["kind"] == "ConfigMap"}
    for doc in workloads().values():
        for container in containers(doc):
            named = {e["name"] for e in container.get("env", []) if e["name"].startswith("BOAF_")}
            assert named <= ALL_VARIABLES, (container["name"], named - ALL_VARIABLES)
            for source in container.get("envFrom", []):
                assert source["configMapRef"]["name"] in config_maps, container["name"]


def test_the_front_ends_the_manifests_reach_are_enabled() -> None:
    settings = pod_settings()
    assert settings.grpc_enabled and settings.http_enabled, "the probes are gRPC and the Service exposes HTTP"
    annotations = find("Deployment", "boaf")["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert settings.metrics_enabled, "Prometheus scrapes the pods"
    assert annotations["prometheus.io/path"] == "/metrics"
    assert settings.metrics_host == "0.0.0.0", "Prometheus scrapes the pod's IP: metrics must listen beyond loopback"


def test_every_probe_asks_grpc_health_for_a_service_the_server_reports() -> None:
    container = service_container()
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert set(container[probe]) & {"grpc", "httpGet", "tcpSocket", "exec"} == {"grpc"}, probe
        assert container[probe]["grpc"].get("service", "") in HEALTH_SERVICES, probe
    assert container["livenessProbe"]["grpc"].get("service", "") == "", "liveness asks about the server as a whole"


@pytest.mark.parametrize("name", ["boaf", "boaf-headless"])
def test_every_service_port_is_the_settings_port_of_its_name(name: str) -> None:
    settings = pod_settings()
    for port in find("Service", name)["spec"]["ports"]:
        expected = getattr(settings, FRONT_END_PORTS[port["name"]])
        assert port["port"] == expected, port
        assert container_port(service_container(), port["targetPort"]) == expected, port


# Kubernetes quantities (resource.Quantity): a decimal number with an optional suffix.
QUANTITY_SUFFIXES: dict[str, float] = {
    "": 1, "m": 10**-3, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
}  # fmt: skip
# Dask's byte sizes (dask.utils.parse_bytes), as --memory-limit takes them.
DASK_SUFFIXES: dict[str, float] = {
    "": 1,
    "B": 1,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}


def quantity(value: str | int | float, suffixes: dict[str, float] = QUANTITY_SUFFIXES) -> float:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([A-Za-z]*)", str(value))
    assert match and match.group(2) in suffixes, f"not a quantity: {value!r}"
    return float(match.group(1)) * suffixes[match.group(2)]


def test_quantities_parse_as_kubernetes_reads_them() -> None:
    assert quantity("3Gi") == 3 * 2**30
    assert quantity("500m") == 0.5
    assert quantity(2) == quantity("2") == 2
    assert quantity("2GiB", DASK_SUFFIXES) == 2 * 2**30
    with pytest.raises(AssertionError):
        quantity("3 GB")


def test_the_memory_limit_is_the_settings_limit_and_holds_their_worst_case() -> None:
    settings = pod_settings()
    limit_mib = quantity(service_container()["resources"]["limits"]["memory"]) / MIB
    worst = settings.worst_case_memory_mb()
    assert settings.memory_limit_mb == limit_mib, "BOAF_MEMORY_LIMIT_MB is the container's memory limit"
    assert worst["total"] <= limit_mib, worst
    reload = reload_memory_mb(settings, registry.default_root())
    assert reload["total"] <= limit_mib, f"a reload of the baked model would be refused: {reload}"


def test_the_cpu_limit_gives_every_concurrent_search_a_core() -> None:
    settings = pod_settings()
    resources = service_container()["resources"]
    assert quantity(resources["limits"]["cpu"]) >= settings.max_concurrent_searches
    assert settings.max_workers >= settings.max_concurrent_searches, "searches run on the RPC threads"


def test_the_autoscaled_containers_request_what_the_autoscaler_measures() -> None:
    hpa = find("HorizontalPodAutoscaler", "boaf")
    measured = {m["resource"]["name"] for m in hpa["spec"]["metrics"] if m["type"] == "Resource"}
    assert measured <= HPA_METRICS
    target = find(hpa["spec"]["scaleTargetRef"]["kind"], hpa["spec"]["scaleTargetRef"]["name"])
    for container in target["spec"]["template"]["spec"]["containers"]:
        assert measured <= set(container["resources"]["requests"]), "utilization is a share of the request"


def test_every_request_is_within_its_limit() -> None:
    for key, doc in workloads().items():
        for container in containers(doc):
            resources = container.get("resources", {})
            for resource, limit in resources.get("limits", {}).items():
                request = resources.get("requests", {}).get(resource, limit)
                assert quantity(request) <= quantity(limit), (key, container["name"], resource)


def test_the_dask_workers_fit_their_container() -> None:
    (worker,) = find("Deployment", "boaf-dask-worker")["spec"]["template"]["spec"]["containers"]
    options = dict(arg[2:].split("=", 1) for arg in worker["command"] if arg.startswith("--") and "=" in arg)
    processes, threads = int(options["nworkers"]), int(options["nthreads"])
    resources = worker["resources"]
    assert processes * threads <= quantity(resources["requests"]["cpu"]), "a core for every compute thread"
    per_process = quantity(options["memory-limit"], DASK_SUFFIXES)
    assert processes * per_process <= quantity(resources["limits"]["memory"]), "--memory-limit is per process"


# ---------------------------------------------------------------- the two images

SERVING_IMAGE = "boaf"  # deploy/Dockerfile's default target: boaf serve and the single-state commands
BATCH_IMAGE = "boaf-batch"  # deploy/Dockerfile, target batch: Dask, datasets, retraining
IMAGE_OF_WORKLOAD = {
    "Deployment/boaf": SERVING_IMAGE,
    "Deployment/boaf-dask-scheduler": BATCH_IMAGE,
    "Deployment/boaf-dask-worker": BATCH_IMAGE,
    "Job/boaf-retrain": BATCH_IMAGE,
}


def project_version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["project"]["version"])


def pod_spec(doc: dict[str, Any]) -> dict[str, Any] | None:
    if doc["kind"] in {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}:
        return doc["spec"]["template"]["spec"]  # type: ignore[no-any-return]
    if doc["kind"] == "CronJob":
        return doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]  # type: ignore[no-any-return]
    if doc["kind"] == "Pod":
        return doc["spec"]  # type: ignore[no-any-return]
    return None


def workloads(paths: list[Path] | None = None) -> dict[str, dict[str, Any]]:
    """Every object that runs pods, as ``Kind/name``."""
    docs = documents() if paths is None else [d for p in paths for d in yaml.safe_load_all(p.read_text("utf-8")) if d]
    return {f"{d['kind']}/{d['metadata']['name']}": d for d in docs if pod_spec(d) is not None}


def containers(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    spec = pod_spec(doc)
    assert spec is not None
    yield from spec.get("initContainers", [])
    yield from spec["containers"]


def test_every_image_line_is_one_of_the_two_images_at_the_project_version() -> None:
    version = project_version()
    allowed = {f"{SERVING_IMAGE}:{version}", f"{BATCH_IMAGE}:{version}"}
    for path in MANIFESTS:
        images = re.findall(r"""^[\s-]*image:\s*["']?([^\s"'#]+)""", path.read_text(encoding="utf-8"), re.MULTILINE)
        assert set(images) <= allowed, f"{path.name}: {set(images) - allowed} (project.version is {version})"


def test_serving_pods_run_boaf_and_batch_pods_run_boaf_batch() -> None:
    version = project_version()
    found = workloads()
    assert set(found) == set(IMAGE_OF_WORKLOAD), "a new workload: say which image it runs in IMAGE_OF_WORKLOAD"
    for key, doc in found.items():
        for container in containers(doc):
            assert container["image"] == f"{IMAGE_OF_WORKLOAD[key]}:{version}", (key, container["name"])


def test_the_kustomization_tags_exactly_the_images_of_its_resources_at_the_project_version() -> None:
    kustomization = find_kustomization()
    used = {
        container["image"].rsplit(":", 1)[0]
        for doc in workloads([K8S / r for r in kustomization["resources"]]).values()
        for container in containers(doc)
    }
    entries = {entry["name"]: entry for entry in kustomization["images"]}
    assert set(entries) == used, "an images entry must match an image of the resources, and each needs one"
    for name, entry in entries.items():
        assert entry.get("newTag") == project_version(), name
        assert "newName" not in entry and "digest" not in entry, name
