"""The first model call: after ``%load_ext`` the model client loads on a background
thread, a ``%%npc`` cell that must still wait for it says so at once, and a call whose
key is missing fails before litellm is imported or any connection is tried."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import npc_nb
from npc_nb.models import credentials, gateway, preload
from npc_nb.notebook.magics import LOADING_LINE
from tests.helpers import PATIENCE, cell, magics_project, run_python, wait_until

# -- loading the client in the background ----------------------------------------------

LOAD_EXT_IN_A_FRESH_KERNEL = """
    import importlib.machinery, json, sys, threading, time

    ran = []  # the thread that ran litellm's import, each time it ran
    gate = threading.Event()

    class HeldLoader:  # runs litellm's module code only once the code below lets it
        def __init__(self, loader):
            self.loader = loader
        def __getattr__(self, name):  # resources and the rest: the real loader's
            return getattr(self.loader, name)
        def create_module(self, spec):
            return self.loader.create_module(spec)
        def exec_module(self, module):
            ran.append(threading.current_thread().name)
            gate.wait(300)
            self.loader.exec_module(module)

    class HoldLitellm:  # finders run under the global import lock: never wait in one
        def find_spec(self, name, path=None, target=None):
            if name != "litellm":
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            spec.loader = HeldLoader(spec.loader)
            return spec

    sys.meta_path.insert(0, HoldLitellm())
    import npc_nb
    seen = {"after import npc_nb": "litellm" in sys.modules}
    from IPython.core.interactiveshell import InteractiveShell
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "npc_nb")
    from npc_nb.models import gateway, preload
    seen["loaded after load_ext"] = gateway.client_loaded()
    # held at the gate, a loader that load_ext started cannot have finished yet
    (loader,) = [t for t in threading.enumerate() if t.name == preload.THREAD_NAME]
    deadline = time.monotonic() + 300
    while not ran and time.monotonic() < deadline:
        time.sleep(0.02)
    seen["loaded while held"] = gateway.client_loaded()
    gate.set()
    loader.join(300)
    seen.update(ran=ran, daemon=loader.daemon, same=preload.start() is loader,
                loaded=gateway.client_loaded(), main=threading.main_thread().name)
    print(json.dumps(seen))
"""


def test_load_ext_loads_the_model_client_on_a_background_thread(tmp_path: Path) -> None:
    seen = json.loads(run_python(LOAD_EXT_IN_A_FRESH_KERNEL, env_home=tmp_path / "home"))
    assert seen["after import npc_nb"] is False
    # load_ext returned, and the kernel went on, while litellm's import was held
    assert seen["loaded after load_ext"] is False and seen["loaded while held"] is False
    # One import, run by the loader thread, never by the kernel's own thread.
    assert seen["ran"] == [preload.THREAD_NAME] and seen["main"] not in seen["ran"]
    assert seen["daemon"] and seen["same"] and seen["loaded"]


class WatchedLock:
    """The gateway's import lock, noting which threads asked for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.asked: list[int] = []

    def __enter__(self) -> WatchedLock:
        self.asked.append(threading.get_ident())
        self._lock.acquire()
        return self

    def __exit__(self, *_: object) -> None:
        self._lock.release()


@dataclass
class HeldClient:
    """The model client as if not loaded yet, its import held until ``gate`` is set."""

    gate: threading.Event = field(default_factory=threading.Event)
    imports: list[str] = field(default_factory=list)  # the threads that imported it
    lock: WatchedLock = field(default_factory=WatchedLock)

    def open_when(self, condition: Callable[[], object], what: str) -> threading.Thread:
        """Let the import go once ``condition`` holds (or after PATIENCE, failing)."""

        def opener() -> None:
            try:
                wait_until(condition, what=what)
            finally:
                self.gate.set()

        thread = threading.Thread(target=opener, daemon=True)
        thread.start()
        return thread


@pytest.fixture
def settled_client() -> None:
    """No background load still running from an earlier ``%load_ext`` in this process
    (one would race with what a test patches): it is waited for, and the client loaded."""
    if preload._thread is not None:
        preload._thread.join(PATIENCE * 4)
    gateway.load_client()


@pytest.fixture
def held_client(settled_client: None, monkeypatch: pytest.MonkeyPatch) -> HeldClient:
    held = HeldClient()
    real_import = gateway._import_litellm

    def held_import() -> object:
        held.imports.append(threading.current_thread().name)
        if not held.gate.wait(PATIENCE * 4):
            raise TimeoutError("the test never let the import go")
        return real_import()

    monkeypatch.setattr(gateway, "_litellm", None)
    monkeypatch.setattr(gateway, "_lock", held.lock)
    monkeypatch.setattr(gateway, "_import_litellm", held_import)
    monkeypatch.setattr(preload, "_thread", None)
    return held


def test_a_call_during_the_background_import_waits_for_it_and_imports_once(
    nb: npc_nb.Project, held_client: HeldClient
) -> None:
    loader = preload.start()
    wait_until(lambda: held_client.imports, what="the background import")
    caller = threading.get_ident()
    held_client.open_when(lambda: caller in held_client.lock.asked, "the call waiting")
    reply = nb.chat("analyst", "hello")
    assert caller in held_client.lock.asked  # it waited on the import in progress ...
    assert held_client.imports == [preload.THREAD_NAME]  # ... and did not start another
    assert reply.text.endswith("You said: hello")
    loader.join(PATIENCE)
    assert not loader.is_alive() and gateway.client_loaded()


# -- the status line -----------------------------------------------------------------


@dataclass
class Screen:
    """What a notebook front end was sent: displays (data, display id, update?) and
    requests to clear the cell's output (their ``wait`` flag)."""

    shown: list[tuple[dict, str | None, bool]] = field(default_factory=list)
    cleared: list[bool] = field(default_factory=list)

    def showing(self, text: str) -> bool:
        return any(data.get("text/plain") == text for data, _, _ in self.shown)


@pytest.fixture
def screen(shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> Screen:
    seen = Screen()

    def publish(data: dict, *_: object, transient: dict | None = None, **kw: object) -> None:
        seen.shown.append((data, (transient or {}).get("display_id"), bool(kw.get("update"))))

    monkeypatch.setattr(shell, "kernel", object(), raising=False)  # draw live displays
    monkeypatch.setattr(shell.display_pub, "publish", publish)
    monkeypatch.setattr(
        shell.display_pub, "clear_output", lambda wait=False: seen.cleared.append(wait)
    )
    return seen


def test_the_first_cell_says_at_once_that_the_model_client_is_loading(
    shell: InteractiveShell, screen: Screen, held_client: HeldClient
) -> None:
    preload.start()
    held_client.open_when(lambda: screen.showing(LOADING_LINE), "the loading line")
    reply = cell(shell, "%%npc analyst\nhello")
    # The line was on screen while the import was still held (only then was it let go),
    (first, display_id, updated), *later = screen.shown
    assert first == {"text/plain": LOADING_LINE} and display_id and not updated
    # and the live reply took its place, in the same display (the result replaces that).
    assert later and all(shown_id == display_id and update for _, shown_id, update in later)
    assert all("text/html" in data and LOADING_LINE not in str(data) for data, _, _ in later)
    assert reply.text.endswith("You said: hello") and screen.cleared[-1] is True
    assert held_client.imports == [preload.THREAD_NAME]


def test_no_loading_line_once_the_client_is_loaded(
    shell: InteractiveShell, screen: Screen, settled_client: None
) -> None:
    cell(shell, "%%npc analyst\nhello")
    assert not screen.showing(LOADING_LINE) and screen.shown


def test_a_replayed_reply_shows_no_loading_line_and_no_live_display(
    shell: InteractiveShell, screen: Screen, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replayed, a reply needs no model client and is whole at once: the cell's one
    output is its result, so a replayed notebook's saved outputs pass strict nbval."""
    nb = magics_project(shell)
    nb.configure(model_replay="record")
    recorded = nb.chat("analyst", "hello", new=True)  # outside the cell: nothing shown
    monkeypatch.setattr(gateway, "client_loaded", lambda: False)  # as if still loading
    monkeypatch.setenv("NPC_NB_RERUN", "replay")
    reply = cell(shell, "%%npc analyst --new\nhello")
    assert reply.text == recorded.text and reply.recording_id is not None
    assert screen.shown == []


# -- failing fast on a missing key -----------------------------------------------------


@dataclass
class Forbidden:
    """Calls that must not happen, recorded (an exception alone could be caught)."""

    calls: list[str] = field(default_factory=list)

    def __call__(self, what: str) -> Callable[..., object]:
        def refuse(*_: object, **__: object) -> object:
            self.calls.append(what)
            raise OSError(f"{what} is not allowed in this test")

        return refuse


@pytest.fixture
def no_openai_key(monkeypatch: pytest.MonkeyPatch) -> Forbidden:
    """No OpenAI key or endpoint in the environment, and no connection possible."""
    wanted = credentials.PROVIDERS["openai"]
    for name in (*wanted.keys, *wanted.endpoints):
        monkeypatch.delenv(name, raising=False)
    forbidden = Forbidden()
    monkeypatch.setattr(socket.socket, "connect", forbidden("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", forbidden("socket.connect_ex"))
    monkeypatch.setattr(socket, "create_connection", forbidden("socket.create_connection"))
    return forbidden


@pytest.mark.parametrize("loaded", [False, True], ids=["client not loaded", "client loaded"])
def test_a_missing_key_fails_before_litellm_or_any_connection(
    nb: npc_nb.Project,
    settled_client: None,
    no_openai_key: Forbidden,
    monkeypatch: pytest.MonkeyPatch,
    loaded: bool,
) -> None:
    if loaded:
        monkeypatch.setattr(gateway._lib(), "completion", no_openai_key("litellm.completion"))
    else:
        monkeypatch.setattr(gateway, "_litellm", None)
        monkeypatch.setattr(gateway, "_import_litellm", no_openai_key("import litellm"))
    with pytest.raises(npc_nb.ModelCallError) as raised:
        nb.chat("analyst", "hi", model="openai/gpt-4o-mini")
    assert "No usable credentials for 'openai/gpt-4o-mini': set OPENAI_API_KEY" in str(raised.value)
    assert no_openai_key.calls == []
    assert nb.sql("SELECT role FROM messages")["role"].tolist() == ["user"]  # kept


def test_a_cell_with_a_missing_key_is_a_one_line_usage_error_at_once(
    shell: InteractiveShell, screen: Screen, held_client: HeldClient, no_openai_key: Forbidden
) -> None:
    with pytest.raises(UsageError) as raised:
        cell(shell, "%%npc analyst --model openai/gpt-4o-mini\nhello")
    message = str(raised.value)
    assert "set OPENAI_API_KEY" in message and "--model npc_nb/offline" in message
    assert "\n" not in message
    assert held_client.imports == [] and no_openai_key.calls == []  # nothing was loaded
    assert screen.showing(LOADING_LINE) and screen.cleared == [True]  # the error replaces it


def fake_litellm(**keys: str | None) -> types.SimpleNamespace:
    """A loaded litellm, as far as the check can tell: its key attributes set."""
    return types.SimpleNamespace(
        api_key=keys.get("api_key"),
        openai_key=keys.get("openai_key"),
        secret_manager_client=None,
        get_llm_provider=lambda model: (model, "openai", None, None),
    )


@pytest.mark.parametrize(
    ("model", "options", "environ", "litellm", "missing"),
    [
        ("openai/gpt-4o-mini", {}, {}, None, ["OPENAI_API_KEY"]),
        ("openai/gpt-4o-mini", {}, {"OPENAI_API_KEY": "  "}, None, ["OPENAI_API_KEY"]),
        ("openai/gpt-4o-mini", {}, {"OPENAI_API_KEY": "sk-x"}, None, []),
        ("anthropic/claude-3-5-haiku-latest", {}, {}, None, ["ANTHROPIC_API_KEY",
         "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_FEDERATION_RULE_ID"]),
        ("anthropic/claude-3-5-haiku-latest", {}, {"ANTHROPIC_AUTH_TOKEN": "t"}, None, []),
        ("gemini/gemini-2.0-flash", {}, {"GOOGLE_API_KEY": "g"}, None, []),
        ("my-model", {"custom_llm_provider": "groq"}, {}, None, ["GROQ_API_KEY"]),
        # a call that brings its own key or endpoint, or is answered without a provider
        ("openai/gpt-4o-mini", {"api_key": "sk-x"}, {}, None, []),
        ("openai/gpt-4o-mini", {"api_base": "http://127.0.0.1:8000/v1"}, {}, None, []),
        ("openai/gpt-4o-mini", {"mock_response": "ok"}, {}, None, []),
        ("openai/gpt-4o-mini", {}, {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}, None, []),
        # providers that need no key or authenticate other ways are left to the provider
        ("ollama/llama3", {}, {}, None, []),
        ("azure/my-deployment", {}, {}, None, []),
        ("npc_nb/offline", {}, {}, None, []),
        # a key set on litellm itself; a bare name only once litellm can resolve it
        ("openai/gpt-4o-mini", {}, {}, fake_litellm(openai_key="sk-x"), []),
        ("openai/gpt-4o-mini", {}, {}, fake_litellm(api_key="sk-x"), []),
        ("gpt-4o", {}, {}, None, []),
        ("gpt-4o", {}, {}, fake_litellm(), ["OPENAI_API_KEY"]),
    ],
)  # fmt: skip
def test_a_key_is_refused_as_missing_only_when_litellm_could_not_find_one_either(
    model: str, options: dict, environ: dict, litellm: object, missing: list[str]
) -> None:
    assert credentials.missing_keys(model, options, litellm, environ) == missing


def test_a_key_in_the_env_file_litellm_loads_is_not_refused(tmp_path: Path) -> None:
    # conftest runs every test in tmp_path: litellm loads ./.env from there on import
    assert credentials.missing_keys("openai/gpt-4o-mini", {}, None, {}) == ["OPENAI_API_KEY"]
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-from-dotenv\n")
    assert credentials.missing_keys("openai/gpt-4o-mini", {}, None, {}) == []
    assert credentials.missing_keys("openai/gpt-4o-mini", {}, None, {"LITELLM_MODE": "PRODUCTION"})


# -- quiet in plain Python -------------------------------------------------------------


def test_chat_in_plain_python_prints_nothing_on_its_first_call(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    process = run_python(
        f"""
        import sys, npc_nb
        nb = npc_nb.open({str(project)!r}, create=True)
        assert "litellm" not in sys.modules  # the first call loads it, on this thread
        reply = nb.chat("analyst", "hello")
        nb.close()
        print("reply:", reply.text.splitlines()[-1])
        """,
        env_home=tmp_path / "home",
        wait=False,
    )
    assert isinstance(process, subprocess.Popen)
    out, err = process.communicate(timeout=240)
    assert (out, err, process.returncode) == ("reply: You said: hello\n", "", 0)
