"""An OTLP/HTTP sink for the trace-cost benches: answers every POST with 200 and an empty
body, and counts the bytes it was sent (printed on exit), so that an exporting server's
cost is measured without a collector's.

    python3 benches/python/otlp_sink.py PORT
"""

import http.server
import signal
import sys

received = 0


class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        global received
        length = int(self.headers.get("content-length", 0))
        received += len(self.rfile.read(length))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink)

    def stop(*_):
        print(f"otlp_sink: {received} bytes received", file=sys.stderr)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        stop()


if __name__ == "__main__":
    main()
