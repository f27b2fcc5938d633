"""Requirements of the two images, read from pyproject.toml, and a check that an environment is pinned.

    python requirements.py split pyproject.toml OUTDIR     # OUTDIR/serve.txt, OUTDIR/batch.txt
    python requirements.py pinned constraints.txt           # every installed distribution at its pin

deploy/Dockerfile installs the dependencies from these lists (with deploy/constraints.txt as
PIP_CONSTRAINT) before the package itself, so that a code change does not reinstall them, and
no stub package is ever built. ``serve.txt`` is ``project.dependencies``; ``batch.txt`` adds the
``batch`` and ``train`` extras. boaf's own distributions are left out of both (a
self-reference such as ``boaf[batch]``, whose requirements are listed anyway, and
``boaf-client``, which the image builds from the repository beside boaf). ``pinned`` fails
when an installed distribution is missing from the constraints or installed at another
version: regenerate them with deploy/image/lock.
Standard library only (it runs in the base image, before anything is installed).
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

# The installer's own tools come with the venv, not from the constraints.
UNPINNED = {"pip", "setuptools", "wheel"}
# boaf's own distributions, built from the repository: never from an index, never pinned.
OWN = {"boaf", "boaf-client"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def split(pyproject: Path, out: Path) -> None:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})

    def own(requirement: str) -> bool:
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        return match is not None and canonical(match.group(1)) in OWN

    serve = [r for r in project["dependencies"] if not own(r)]
    batch = serve + [r for extra in ("batch", "train") for r in extras[extra] if not own(r)]
    out.mkdir(parents=True, exist_ok=True)
    for file, requirements in (("serve.txt", serve), ("batch.txt", batch)):
        (out / file).write_text("".join(f"{r}\n" for r in requirements), encoding="utf-8")


def pinned(constraints: Path) -> int:
    pins: dict[str, str] = {}
    for line in constraints.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[canonical(name)] = version.strip()
    problems = []
    for dist in metadata.distributions():
        name = canonical(dist.metadata["Name"])
        if name in UNPINNED or name in OWN:
            continue
        if name not in pins:
            problems.append(f"{name} {dist.version} is not in {constraints.name}")
        elif pins[name] != dist.version:
            problems.append(f"{name} {dist.version} is installed, {constraints.name} pins {pins[name]}")
    for problem in sorted(problems):
        print(f"requirements.py: {problem}", file=sys.stderr)
    if problems:
        print("requirements.py: regenerate the constraints with deploy/image/lock", file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "split":
        split(Path(argv[1]), Path(argv[2]))
        return 0
    if len(argv) == 2 and argv[0] == "pinned":
        return pinned(Path(argv[1]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
