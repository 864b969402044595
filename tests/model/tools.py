#!/usr/bin/env python3
# exec model test program (TURN-2, TURN-3): with no rounds it calls two tools (the
# second without an id, so the backend makes one); once rounds are present it answers
# with text quoting every result it was given, so a caller sees the round trip.
import json, os, sys
doc = json.load(sys.stdin)
rec = os.environ.get("TH_MODEL_RECORD")
if rec:
    with open(rec, "w") as f:
        json.dump({"input": doc}, f)
rounds = doc.get("rounds") or []
if not rounds:
    print(json.dumps({"tool_calls": [
        {"id": "c1", "name": "create_plan", "arguments": {"steps": ["a", "b"]}},
        {"name": "complete_step", "arguments": {"step": 0}},
    ]}))
else:
    quoted = []
    for r in rounds:
        for res in r.get("results", []):
            quoted.append("%s=%s:%s" % (res.get("id"), "ok" if res.get("ok") else "error",
                                        res.get("content")))
    print(json.dumps({"text": "done after %d round(s): %s" % (len(rounds), "; ".join(quoted))}))
