"""What `codeqa ui` runs: the page (app.py) behind the Host and Origin check of hosts.py.

`streamlit run serve.py` finds `app`, a Streamlit ASGI app, and serves it with the flags it was given; the check
is middleware in front of Streamlit's own, so no request reaches the page or its websocket unchecked. The
address the page is bound to comes from those flags (`--server.address`), as Streamlit itself reads it.
"""

from pathlib import Path

from starlette.middleware import Middleware
from streamlit import config
from streamlit.starlette import App

from codeqa.ui.hosts import HostCheck

app = App(Path(__file__).with_name("app.py"),
          middleware=[Middleware(HostCheck, bound=config.get_option("server.address") or "")])
