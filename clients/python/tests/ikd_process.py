"""An ikd server as a child process on a port the kernel picked (its "ikd listening on port N"
line), as tests/testing/integration_fixture.h starts it for the C++ integration tests."""
import re
import signal
import subprocess
import threading

LISTENING = re.compile(rb"ikd listening on port (\d+)")


class IkdProcess:
    """Starts `binary` on 127.0.0.1:0 with `store` and waits for its port; stop() ends it.

    Its output is drained on a thread (a full pipe would block the server) and kept for
    diagnostics in `output`.
    """

    def __init__(self, binary, store=":memory:", flags=(), timeout=10.0):
        argv = [binary, "--listen=127.0.0.1:0", f"--store={store}", "--threads=2",
                "--grace=3s", *flags]
        self._process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self._lines = []
        self._port_known = threading.Event()
        self.port = None
        threading.Thread(target=self._drain, daemon=True).start()
        if not self._port_known.wait(timeout) or self.port is None:
            self.stop()
            raise RuntimeError(f"ikd did not report its port within {timeout} s:\n{self.output}")

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    @property
    def output(self):
        return b"".join(self._lines).decode(errors="replace")

    def _drain(self):
        for line in self._process.stdout:
            self._lines.append(line)
            match = LISTENING.search(line)
            if match and self.port is None:
                self.port = int(match.group(1))
                self._port_known.set()
        self._port_known.set()  # exited: stop waiting for a port

    def stop(self):
        """SIGTERM (ikd drains its calls and exits 0), SIGKILL if it does not exit in 10 s."""
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        return self._process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
