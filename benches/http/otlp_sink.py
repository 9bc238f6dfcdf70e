"""An OTLP/HTTP sink for benches/http/otel.sh: answers every POST with 200 and an empty
protobuf body, and counts the exports and bytes it took (GET /count)."""
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
COUNTS = {"exports": 0, "bytes": 0}


class Sink(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        with LOCK:
            COUNTS["exports"] += 1
            COUNTS["bytes"] += length
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self):
        with LOCK:
            text = f"{COUNTS['exports']} exports, {COUNTS['bytes']} bytes".encode()
        self.send_response(200)
        self.send_header("content-length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
