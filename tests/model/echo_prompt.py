#!/usr/bin/env python3
# exec model test program (TURN-2): answers with text built from the prompt and keeps
# the whole input it received, and the names of the TINY_HARNESS_* variables it sees,
# in $TH_MODEL_RECORD (when set) for the test to inspect.
import json, os, sys
doc = json.load(sys.stdin)
rec = os.environ.get("TH_MODEL_RECORD")
if rec:
    with open(rec, "w") as f:
        json.dump({"input": doc, "harness_env": sorted(k for k in os.environ
                                                       if k.startswith("TINY_HARNESS_"))}, f)
extra = " ".join(sys.argv[1:])
print(json.dumps({"text": "prog: " + (doc.get("prompt") or "") + ((" " + extra) if extra else "")}))
