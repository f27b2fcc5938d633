"""deploy/ agrees with the code: every manifest parses, and ports, probes and BOAF_* names match the settings."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from service.server import SERVICE_NAME
from service.settings import Settings, env_names

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
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
    (init,) = pod["initContainers"]
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
    address = {e["name"]: e["value"] for e in container["env"]}["DASK_SCHEDULER"]
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
