#!/usr/bin/env python3
# A loopback Chat Completions server for tests/unit/check_model.c (TURN-2, CTL-3).
#
#   fake_openai.py QUEUE RECORD PORTFILE
#
# Listens on 127.0.0.1 (a free port, written to PORTFILE once listening). Each POST to
# .../chat/completions appends {"path","headers","body"} as one JSON line to RECORD and
# answers with the next entry of QUEUE (a JSON array of {"status", "body", "delay_ms"};
# body is sent as JSON). An empty queue answers 500. Exits on its own after 60 s, so a
# test that dies cannot leave it running; the test stops it by pid.
import json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, HTTPServer

queue_path, record_path, port_path = sys.argv[1:4]
with open(queue_path) as f:
    queue = json.load(f)
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with lock:
            with open(record_path, "a") as f:
                f.write(json.dumps({"path": self.path,
                                    "headers": {k.lower(): v for k, v in self.headers.items()},
                                    "body": body}) + "\n")
            item = queue.pop(0) if queue else {"status": 500, "body": {"error": "queue empty"}}
        delay = item.get("delay_ms", 0) / 1000.0
        end = time.monotonic() + delay
        while time.monotonic() < end:
            time.sleep(0.02)
        data = json.dumps(item.get("body", {})).encode()
        try:
            self.send_response(item.get("status", 200))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client went away (a cut)


server = HTTPServer(("127.0.0.1", 0), Handler)
server.timeout = 0.2
with open(port_path + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_path + ".tmp", port_path)
stop = time.monotonic() + 60
while time.monotonic() < stop:
    server.handle_request()
