"""A small HTTP server on loopback that plays a service for tests (the clouds' instance metadata
for stratus-preempt-watch). Subclass Played with do_GET/do_PUT answering through answer()."""
import http.server
import threading


class Played(http.server.BaseHTTPRequestHandler):
    def answer(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serve(handler):
    """Starts `handler` on a free loopback port in a thread; returns (server, base URL).
    Call server.shutdown() when done."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
