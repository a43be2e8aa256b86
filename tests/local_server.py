"""The part the test stubs share: an HTTP server on 127.0.0.1 (random port) in a daemon thread, whose
handler class gets `owner` = the stub, plus start/stop and `with` support."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JSONHandler(BaseHTTPRequestHandler):
    """A quiet request handler that answers JSON."""

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def send_json(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)




class LocalServer:
    handler: type[BaseHTTPRequestHandler]  # the stub's request handler; it reads the stub as `self.owner`
    thread_name = "stub-server"
    _server: ThreadingHTTPServer | None = None

    def start(self):
        handler = type("Handler", (self.handler,), {"owner": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        # a short poll: stop() waits for the loop to notice, 0.5 s a stub at the default
        threading.Thread(target=self._server.serve_forever, args=(0.05,), name=self.thread_name, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self):
        return self.start() if self._server is None else self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the stub first"
        return self._server.server_address[1]
