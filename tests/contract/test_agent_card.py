#!/usr/bin/env python3
"""Pins the agent card (CARD-4): `tiny-harness card` against tests/contract/agent-card.json.

The snapshot was produced with TINY_HARNESS_BASE_URL=http://127.0.0.1:8080/ and no other
configuration, in an empty directory (so no conf/ file and no commands directory: only the
built-in commands). Both sides are canonicalised (keys sorted, two-space indent) before they
are compared, so the snapshot's own layout does not matter, only its content.

When the card changes on purpose, regenerate the snapshot with
    TH_UPDATE_SNAPSHOT=1 TH_BIN=.../src/tiny-harness python3 tests/contract/test_agent_card.py
and review the diff like any other change to the public contract.

TAP output; exit 0 when every check passed, 1 otherwise, 77 when TH_BIN is not available.
"""

import difflib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SNAPSHOT = os.path.join(HERE, "agent-card.json")
BASE = "http://127.0.0.1:8080/"
OTHER_BASE = "https://agents.example.test/harness/"

results = []


def check(ok, name, detail=None):
    results.append(ok)
    print(("ok" if ok else "not ok") + " %d - %s" % (len(results), name))
    if not ok and detail:
        for line in str(detail).splitlines():
            print("# " + line)
    sys.stdout.flush()
    return ok


def canonical(value):
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def run_card(th_bin, base_url):
    """Runs `tiny-harness card` in an empty directory with nothing configured but the base
    URL, so that a developer's conf/ or environment cannot leak into the snapshot."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TINY_HARNESS_")}
    env["TINY_HARNESS_BASE_URL"] = base_url
    for k in ("REQUEST_METHOD", "GATEWAY_INTERFACE", "FCGI_ROLE"):
        env.pop(k, None)
    with tempfile.TemporaryDirectory(prefix="th-card-") as tmp:
        proc = subprocess.run([th_bin, "card"], cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=30)
    return proc


def parse(proc):
    try:
        return json.loads(proc.stdout.decode("utf-8")), None
    except (UnicodeDecodeError, ValueError) as exc:
        return None, "stdout is not JSON (%s): %r\nstderr: %r" % (
            exc, proc.stdout[:400], proc.stderr[:400])


def main():
    th_bin = os.environ.get("TH_BIN")
    if not th_bin or not os.access(th_bin, os.X_OK):
        print("1..0 # SKIP TH_BIN is not set to the built tiny-harness program")
        return 77

    proc = run_card(th_bin, BASE)
    card, err = parse(proc)
    check(proc.returncode == 0 and isinstance(card, dict),
          "CARD-4 tiny-harness card exits 0 and prints one JSON object",
          "exit %d\n%s" % (proc.returncode, err or proc.stderr.decode("utf-8", "replace")))

    if os.environ.get("TH_UPDATE_SNAPSHOT") == "1" and isinstance(card, dict):
        with open(SNAPSHOT, "w", encoding="utf-8") as f:
            f.write(canonical(card))
        print("# wrote " + SNAPSHOT)

    try:
        with open(SNAPSHOT, encoding="utf-8") as f:
            snap_text = f.read()
        snapshot = json.loads(snap_text)
    except (OSError, ValueError) as exc:
        snapshot, snap_text = None, None
        check(False, "CARD-4 the committed snapshot tests/contract/agent-card.json is readable JSON",
              str(exc))
    else:
        check(snap_text == canonical(snapshot),
              "CARD-4 the committed snapshot is in canonical form (sorted keys, two-space indent)",
              "regenerate it with TH_UPDATE_SNAPSHOT=1")

    if snapshot is not None:
        got = canonical(card) if isinstance(card, dict) else ""
        want = canonical(snapshot)
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                            "agent-card.json (snapshot)", "tiny-harness card"))
        check(got == want, "CARD-4 the produced card equals the committed snapshot", diff)

    # The card is built from configuration: only the interface URLs follow the base URL.
    other = run_card(th_bin, OTHER_BASE)
    other_card, err = parse(other)
    urls = [i.get("url") for i in (other_card or {}).get("supportedInterfaces", [])]
    check(other.returncode == 0 and urls == [OTHER_BASE, OTHER_BASE],
          "CARD-1 both interfaces carry the configured base URL",
          err or "urls: %r" % (urls,))
    if snapshot is not None and isinstance(other_card, dict):
        rebased = json.loads(json.dumps(other_card))
        for iface in rebased.get("supportedInterfaces", []):
            if iface.get("url") == OTHER_BASE:
                iface["url"] = BASE
        check(canonical(rebased) == canonical(snapshot),
              "CARD-1 nothing but the interface URLs depends on the base URL",
              "".join(difflib.unified_diff(canonical(snapshot).splitlines(True),
                                           canonical(rebased).splitlines(True))))

    print("1..%d" % len(results))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
