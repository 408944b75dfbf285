# The moonflow kernel on the raw protocol, through jupyter_client: interrupt,
# restart, messages it must refuse or survive, and output written by C code.
import queue
import time

import pytest
from jupyter_client.manager import start_new_kernel
from jupyter_client.session import Session

TIMEOUT = 30


@pytest.fixture
def kernel():
    km, kc = start_new_kernel(kernel_name="moonflow", startup_timeout=TIMEOUT)
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def run(kc, code, timeout=TIMEOUT):
    """Executes 'code'; returns the reply content and the IOPub outputs."""
    outputs = []
    reply = kc.execute_interactive(code, timeout=timeout, output_hook=outputs.append)
    return reply["content"], outputs


def result_text(outputs):
    results = [m for m in outputs if m["msg_type"] == "execute_result"]
    assert len(results) == 1, outputs
    return results[0]["content"]["data"]["text/plain"]


def stream_text(outputs, name="stdout"):
    return "".join(m["content"]["text"] for m in outputs
                   if m["msg_type"] == "stream" and m["content"]["name"] == name)


def interrupt_while_running(km, kc, code):
    """Sends 'code', interrupts it once it runs; returns the execute reply."""
    msg_id = kc.execute(code)
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:   # wait until the cell is running
        msg = kc.get_iopub_msg(timeout=TIMEOUT)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "execute_input":
            break
    time.sleep(0.5)
    km.interrupt_kernel()
    while True:
        reply = kc.get_shell_msg(timeout=TIMEOUT)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]


def test_interrupt_long_loop(kernel):
    km, kc = kernel
    reply = interrupt_while_running(km, kc, "local n = 0\nwhile true do n = n + 1 end")
    assert reply["status"] == "error"
    assert reply["ename"] == "Interrupted"
    assert "interrupted" in reply["evalue"]
    content, outputs = run(kc, "40 + 2")   # the kernel lives, with its state
    assert content["status"] == "ok" and result_text(outputs) == "42"


def test_interrupt_matmul(kernel):
    km, kc = kernel
    reply = interrupt_while_running(
        km, kc, "local a = mf.random.normal({600, 600})\n"
                "for i = 1, 100000 do a = mf.matmul(a, a) / 600 end")
    assert reply["status"] == "error" and "interrupted" in reply["evalue"]
    content, outputs = run(kc, "mf.reduce_sum(mf.ones({2, 2})):item()")
    assert result_text(outputs) == "4.0"


def test_interrupt_fit(kernel):
    km, kc = kernel
    run(kc, "L = mf.layers\nx = mf.random.uniform({512, 16}, {seed = 1})\n"
            "y = mf.reduce_sum(x, {axis = 2, keepdims = true})\n"
            "model = L.Sequential{L.Dense(32, {input_shape = {16}}), L.Dense(1)}")
    reply = interrupt_while_running(
        km, kc, "model:fit(x, y, {loss = mf.losses.mean_squared_error, epochs = 100000,\n"
                "          optimizer = mf.train.AdamOptimizer(1e-3), batch_size = 32})")
    assert reply["status"] == "error" and "interrupted" in reply["evalue"]
    content, outputs = run(kc, "model.built")   # the model and the kernel are still there
    assert content["status"] == "ok" and result_text(outputs) == "true"


def test_interrupt_between_cells_is_harmless(kernel):
    km, kc = kernel
    run(kc, "kept = 7")
    km.interrupt_kernel()
    time.sleep(0.5)
    content, outputs = run(kc, "kept")
    assert content["status"] == "ok" and result_text(outputs) == "7"


def test_restart(kernel):
    km, kc = kernel
    run(kc, "before_restart = 1")
    pid = km.provisioner.process.pid
    km.restart_kernel(now=False)
    kc.wait_for_ready(timeout=TIMEOUT)
    assert km.provisioner.process.pid != pid
    content, outputs = run(kc, "before_restart")
    assert content["status"] == "ok" and result_text(outputs) == "nil"


def test_wrong_signature_is_dropped(kernel):
    km, kc = kernel
    forged = Session(key=b"not-the-key", signature_scheme="hmac-sha256")
    forged.send(kc.shell_channel.socket, "execute_request",
                {"code": "forged_ran = true", "silent": False, "store_history": True,
                 "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
    with pytest.raises(queue.Empty):   # no reply: the message is not read at all
        kc.get_shell_msg(timeout=2)
    content, outputs = run(kc, "forged_ran")
    assert content["status"] == "ok" and result_text(outputs) == "nil"


def test_unknown_message_types(kernel):
    km, kc = kernel
    for msg_type, content in [("no_such_request", {}),
                              ("comm_open", {"comm_id": "c1", "target_name": "jupyter.widget",
                                             "data": {}}),
                              ("comm_msg", {"comm_id": "c1", "data": {}})]:
        kc.session.send(kc.shell_channel.socket, msg_type, content)
    content, outputs = run(kc, "1 + 1")
    assert content["status"] == "ok" and result_text(outputs) == "2"
    assert km.is_alive()


def test_stdout_from_c_arrives_as_stream(kernel):
    km, kc = kernel
    # the plot's text drawing is written by C (fputs to stdout), the progress
    # lines by train/progress.c (fprintf), the echo by another process
    content, outputs = run(kc, 'mf.plot({1, 2, 3}, {print = true, title = "from C"})\n'
                               'local p = mf.progress{total = 2, tty = false}\n'
                               'p:update{loss = 0.5}\np:update{loss = 0.25}\np:done()\n'
                               'os.execute("echo from-a-child")')
    assert content["status"] == "ok"
    text = stream_text(outputs)
    assert "from C" in text
    assert "step 2/2" in text and "loss 0.25" in text
    assert "from-a-child" in text


def test_stdout_order_and_stderr(kernel):
    km, kc = kernel
    content, outputs = run(kc, 'print("one")\nio.stderr:write("two\\n")\nprint("three")\n5')
    assert stream_text(outputs) == "one\nthree\n"
    assert stream_text(outputs, "stderr") == "two\n"
    kinds = [m["msg_type"] for m in outputs]
    assert kinds.index("execute_result") > max(i for i, k in enumerate(kinds) if k == "stream")


def test_progress_is_one_throttled_display(kernel):
    km, kc = kernel
    # 3 epochs of 400 steps, about 2 ms each: thousands of updates in ~2.4 s
    start = time.time()
    content, outputs = run(kc, "local p <close> = mf.progress{total = 400, epochs = 3}\n"
                               "for e = 1, 3 do for s = 1, 400 do\n"
                               "  local t0 = mf.clock() while mf.clock() - t0 < 0.002 do end\n"
                               "  p:update{loss = 1 / (e * s)}\n"
                               "end end")
    elapsed = time.time() - start
    assert content["status"] == "ok"
    shown = [m for m in outputs if m["msg_type"] == "display_data"
             and "image/svg+xml" not in m["content"]["data"]]
    updates = [m for m in outputs if m["msg_type"] == "update_display_data"]
    assert len(shown) == 1
    display_id = shown[0]["content"]["transient"]["display_id"]
    assert all(m["content"]["transient"]["display_id"] == display_id for m in updates)
    assert 2 <= len(updates) <= 10 * elapsed + 2
    assert "epoch 3/3  step 400/400" in updates[-1]["content"]["data"]["text/plain"]
    assert not stream_text(outputs)   # no progress lines as text
    curve = [m for m in outputs if m["msg_type"] == "display_data"
             and "image/svg+xml" in m["content"]["data"]]
    assert len(curve) == 1          # the loss curve after the last step


def test_cut_utf8_sequence_is_sent_at_the_end_of_the_cell(kernel):
    km, kc = kernel
    # the first two bytes of a three-byte character: held back for its end,
    # which never comes, so the cell's output still carries them
    content, outputs = run(kc, 'io.write("x\\xe2\\x82")')
    assert content["status"] == "ok"
    assert stream_text(outputs).startswith("x") and len(stream_text(outputs)) >= 2
    content, outputs = run(kc, 'io.write("\\xe2\\x82\\xac\\n")')   # a whole euro sign
    assert stream_text(outputs) == "\u20ac\n"
