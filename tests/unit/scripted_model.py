#!/usr/bin/env python3
"""A real model program for the exec backend (TURN-2) that the intrinsics tests drive.

It answers from the prompt alone, so a test decides exactly what the "model" does:
  call [ {"name": ..., "arguments": {...}}, ... ]  -> those tool calls (TURN-3)
  fail!                                             -> exits 3 after a line on stderr
  context?                                          -> "context: " and the whole input
                                                       (SEC-2: what the model was shown)
  window?                                           -> "window: " and the messageIds of the
                                                       history it was given, oldest first
                                                       (SEC-3: the window of recent history)
  anything else                                     -> the text "model: <prompt>"
and once a round of tool calls has been answered, it replies with a text that quotes
every result, so the test can read what the harness told the model.
"""
import json
import sys

req = json.load(sys.stdin)
prompt = req.get("prompt") or ""
rounds = req.get("rounds") or []
tools = [t["name"] for t in (req.get("tools") or [])]

if rounds:
    results = rounds[-1]["results"]
    words = "; ".join(
        "%s %s: %s" % (r["name"], "ok" if r["ok"] else "error", r["content"]) for r in results
    )
    print(json.dumps({"text": "done: " + words}))
elif prompt.startswith("call "):
    calls = json.loads(prompt[5:])
    print(json.dumps({"tool_calls": [
        {"id": "c%d" % i, "name": c["name"], "arguments": c["arguments"]}
        for i, c in enumerate(calls)
    ]}))
elif prompt == "fail!":
    sys.stderr.write("internal detail: /srv/secret/weights.bin missing\n")
    sys.exit(3)
elif prompt == "context?":
    print(json.dumps({"text": "context: " + json.dumps(req)}))
elif prompt == "window?":
    ids = [m.get("messageId", "?") for m in (req.get("history") or [])]
    print(json.dumps({"text": "window: " + ",".join(ids)}))
elif prompt == "tools?":
    print(json.dumps({"text": "tools: " + ",".join(sorted(tools))}))
else:
    print(json.dumps({"text": "model: " + prompt}))
