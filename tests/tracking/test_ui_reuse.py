"""A later sweep on the same store points at the MLflow UI already serving it (issue #47, item
6: it printed a new ``mlflow ui`` command on a new port while a UI served the store on the
port it had printed before). A UI is recognised by asking it for the sweep's parent run (a run
id is unique, so the UI of another store does not answer for it); the port a sweep prints is
remembered on the store (experiment tag ``recoeval.ui_port``) for the next sweep.

The UI is a small HTTP server in the test answering MLflow's ``runs/get`` call (a real
``mlflow ui`` takes 15 s to start here; the screenshot tests use one)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from recoeval_tracking.tracking.sweeps import create_sweep_parent
from recoeval_tracking.tracking.views import UI_PORT_TAG, sweep_view_hint, ui_base


@pytest.fixture
def fake_ui():
    """A UI that knows the run ids in ``server.known``."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            url = urlparse(self.path)
            run_id = parse_qs(url.query).get("run_id", [""])[0]
            if url.path != "/api/2.0/mlflow/runs/get" or run_id not in server.known:
                self.send_response(404)
                self.end_headers()
                return
            body = json.dumps({"run": {"info": {"run_id": run_id}}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.known = set()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_ui_serving_the_store_is_reused_and_another_stores_is_not(fake_ui):
    port = fake_ui.server_address[1]
    fake_ui.known.add("run-a")
    assert ui_base("sqlite:///x.db", "run-a", [port]) == (f"http://127.0.0.1:{port}", None)
    base, command = ui_base("sqlite:///x.db", "run-b", [port])  # another store's UI
    assert command is not None and not base.endswith(f":{port}")
    assert f"--port {base.rsplit(':', 1)[-1]}" in command


def test_the_next_sweep_finds_the_ui_on_the_port_the_last_one_printed(fake_ui, store_uri):
    from mlflow import MlflowClient

    first = create_sweep_parent(tracking_uri=store_uri, sweep_id="s1")
    text = sweep_view_hint(first.run_id, store_uri)
    assert "start the MLflow UI: mlflow ui" in text
    client = MlflowClient(store_uri)
    printed = client.get_experiment(first.experiment_id).tags[UI_PORT_TAG]
    assert f"--port {printed}" in text
    # the user started the UI there: here the fake one, whose port the store now remembers
    port = fake_ui.server_address[1]
    client.set_experiment_tag(first.experiment_id, UI_PORT_TAG, str(port))
    second = create_sweep_parent(tracking_uri=store_uri, sweep_id="s2")
    fake_ui.known.update({first.run_id, second.run_id})
    text = sweep_view_hint(second.run_id, store_uri)
    assert "mlflow ui --backend-store-uri" not in text
    assert f"the MLflow UI already serving this store: http://127.0.0.1:{port}" in text
    assert f"http://127.0.0.1:{port}/#/experiments/" in text
