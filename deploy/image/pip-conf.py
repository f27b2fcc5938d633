"""Print a pip.conf for pip inside the image build: the host's way to the package index, nothing else.

    python3 deploy/image/pip-conf.py > pip.conf

pip in the build has to reach PyPI the way the host's pip does: the same index (a mirror or a
proxy index, perhaps with credentials), trusted hosts, proxy and timeouts. This reads them from
the host's pip configuration (the files pip reads, PIP_CONFIG_FILE, then PIP_* variables, the
later winning) and writes only those settings. Local paths (``file://`` indexes, find-links,
constraints) are left out, as they do not exist in the build; a ``cert`` becomes the system
bundle, into which deploy/image/base installs the host's CA certificates. deploy/image/check
passes the result to the build as a secret (``--secret id=pip.conf``), so it never lands in a
layer, the image history or the repository. Standard library only.
"""

from __future__ import annotations

import configparser
import os
import sys
from pathlib import Path

KEYS = ("index-url", "extra-index-url", "trusted-host", "proxy", "timeout", "default-timeout", "retries", "cert")
SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def config_files() -> list[Path]:
    home = Path.home()
    xdg_dirs = os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(os.pathsep)
    files = [Path(d) / "pip" / "pip.conf" for d in xdg_dirs if d]
    files += [Path("/etc/pip.conf"), home / ".pip" / "pip.conf"]
    files.append(Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "pip" / "pip.conf")
    if os.environ.get("PIP_CONFIG_FILE"):
        files.append(Path(os.environ["PIP_CONFIG_FILE"]))
    return files


def host_settings() -> dict[str, str]:
    found: dict[str, str] = {}
    for file in config_files():
        if not file.is_file() or os.devnull == str(file):
            continue
        parser = configparser.RawConfigParser()
        try:
            parser.read(file, encoding="utf-8")
        except (configparser.Error, OSError):
            continue
        for section in ("global", "install", "download"):
            if parser.has_section(section):
                for key in KEYS:
                    if parser.has_option(section, key):
                        found[key] = parser.get(section, key)
    for key in KEYS:
        value = os.environ.get("PIP_" + key.upper().replace("-", "_"))
        if value is not None:
            found[key] = value
    return found


def remote(values: str) -> list[str]:
    return [v for v in values.split() if v.startswith(("http://", "https://"))]


def main() -> int:
    settings = host_settings()
    if "default-timeout" in settings:  # pip's other name for timeout
        settings.setdefault("timeout", settings.pop("default-timeout"))
    lines = ["[global]"]
    for key in ("index-url", "extra-index-url"):
        urls = remote(settings.get(key, ""))
        if urls and key == "index-url":
            lines.append(f"index-url = {urls[0]}")
        elif urls:
            lines.append(f"extra-index-url = {' '.join(urls)}")
    for key in ("trusted-host", "proxy", "timeout", "retries"):
        if settings.get(key, "").strip():
            lines.append(f"{key} = {' '.join(settings[key].split())}")
    if settings.get("cert", "").strip():
        lines.append(f"cert = {SYSTEM_BUNDLE}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
