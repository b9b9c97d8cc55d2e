"""`python -m bot.healthcheck`: exit 0 when the running service answers /healthz, 1 otherwise.

For container HEALTHCHECKs and supervisors: it reads METRICS_PORT (and METRICS_HOST, 0.0.0.0 meaning
this machine) the way the service does, so the probe follows the service's configuration.
"""

from __future__ import annotations

import os
import sys

import httpx

TIMEOUT = 4.0


def main() -> int:
    port = os.environ.get("METRICS_PORT", "").strip()
    if not port.isdigit():
        print("healthcheck: METRICS_PORT is not set: the service serves no /healthz", file=sys.stderr)
        return 1
    host = os.environ.get("METRICS_HOST", "127.0.0.1").strip() or "127.0.0.1"
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    try:
        response = httpx.get(f"http://{host}:{port}/healthz", timeout=TIMEOUT)
    except httpx.HTTPError as exc:
        print(f"healthcheck: no answer on {host}:{port}: {exc}", file=sys.stderr)
        return 1
    if response.status_code != 200:
        print(f"healthcheck: /healthz answered {response.status_code}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
