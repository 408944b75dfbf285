# jupyter_kernel_test's conformance tests for the moonflow kernel: every
# reply and output is validated against the message schema.
import unittest

import jupyter_kernel_test


class MoonflowKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "moonflow"
    language_name = "lua"
    file_extension = ".lua"

    code_hello_world = 'print("hello, world")'
    code_stderr = 'io.stderr:write("to stderr\\n")'

    completion_samples = [
        {"text": "mf.zer", "matches": {"mf.zeros(", "mf.zeros_like("}},
        {"text": "y = mf.random.norm", "matches": {"mf.random.normal("}},
        {"text": "pri", "matches": {"print("}},
    ]

    complete_code_samples = ["x = 1", "for i=1,3 do end", "1 + 2", "x = 2\nx * 3"]
    incomplete_code_samples = ["for i=1,3 do", "function f(x)", "t = {1,\n2,"]
    invalid_code_samples = ["x = = 1", "end"]

    code_generate_error = 'error("boom")'

    code_execute_result = [
        {"code": "1 + 2", "result": "3"},
        {"code": "x = 6\nx * 7", "result": "42"},
        {"code": "mf.reduce_sum(mf.tensor({1, 2, 3})):item()", "result": "6.0"},
        {"code": "mf.tensor({{1, 2}, {3, 4}})", "mime": "text/html"},
        {"code": "mf.profiler.start()\nlocal m = mf.matmul(mf.ones{8, 8}, mf.ones{8, 8})\n"
                 "mf.profiler.stop()", "mime": "text/html"},
    ]

    def test_profile_report_table(self):
        """A profiler report shows as a table: a row per op, then the totals."""
        self.flush_channels()
        reply, outputs = self.execute_helper(
            "mf.profiler.start()\nlocal m = mf.matmul(mf.ones{8, 8}, mf.ones{8, 8})\n"
            "mf.profiler.stop()")
        html = [m for m in outputs if m["msg_type"] == "execute_result"][0]["content"]["data"][
            "text/html"]
        self.assertIn("<th>op</th><th>calls</th><th>total ms</th>", html)
        self.assertIn("<tr><td>MatMul</td><td style=\"text-align:right\">1</td>", html)
        self.assertIn("<p>1 op call", html)

    code_display_data = [
        {"code": "mf.plot({1, 3, 2})", "mime": "image/svg+xml"},
        {"code": "mf.imshow(mf.tensor{{1, 2}, {3, 4}})", "mime": "image/svg+xml"},
        {"code": "mf.hist(mf.tensor{1, 2, 2, 3})", "mime": "image/svg+xml"},
        {"code": "display(mf.tensor({{1, 2}, {3, 4}}))", "mime": "text/html"},
    ]

    supported_history_operations = ("tail",)

    code_inspect_sample = "mf.zeros"

    def test_error_traceback(self):
        """The error reply and the error output carry the Lua traceback."""
        self.flush_channels()
        reply, outputs = self.execute_helper('local function f() error("deep") end\nlocal y = f()')
        self.assertEqual(reply["content"]["status"], "error")
        self.assertEqual(reply["content"]["ename"], "LuaError")
        self.assertIn("deep", reply["content"]["evalue"])
        errors = [m for m in outputs if m["msg_type"] == "error"]
        self.assertEqual(len(errors), 1)
        traceback = "\n".join(errors[0]["content"]["traceback"])
        self.assertIn("stack traceback:", traceback)
        # a top-level local is the session's (the prompt's rule), each frame
        # shows its source line
        self.assertIn("In[%d]:1: in function 'f'\n\t    local function f() error(\"deep\") end"
                      % reply["content"]["execution_count"], traceback)
        self.assertIn("in main chunk\n\t    local y = f()", traceback)

    def test_block_ending_a_cell_runs_whole(self):
        """A cell ending with 'end' is not made to return from its loop."""
        self.flush_channels()
        reply, outputs = self.execute_helper("for i = 1, 3 do\n  print(i * i)\nend")
        text = "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream")
        self.assertEqual(text, "1\n4\n9\n")
        self.assertFalse([m for m in outputs if m["msg_type"] == "execute_result"])

    def test_notebook_plot_errors_show_the_users_frames(self):
        """An error in mf.plot names plot, not the kernel's own Lua code."""
        self.flush_channels()
        reply, outputs = self.execute_helper('mf.plot({1, 2}, {labels = "a"})')
        self.assertEqual(reply["content"]["status"], "error")
        self.assertIn("plot: 'labels' must be an array of strings", reply["content"]["evalue"])
        self.assertNotIn("kernel/display.lua", "\n".join(reply["content"]["traceback"]))

    def test_is_complete_indent(self):
        """An incomplete cell asks for an indented continuation line."""
        self.flush_channels()
        self.kc.is_complete("for i=1,3 do")
        reply = self.get_non_kernel_info_reply(timeout=10)
        self.assertEqual(reply["content"]["status"], "incomplete")
        self.assertEqual(reply["content"]["indent"], "  ")

    def test_inspect_text(self):
        """inspect shows help()'s entry; an unknown name is not found."""
        self.flush_channels()
        self.kc.inspect("mf.matmul(a, b)", cursor_pos=6)
        reply = self.get_non_kernel_info_reply(timeout=10)
        self.assertTrue(reply["content"]["found"])
        self.assertIn("matmul", reply["content"]["data"]["text/plain"])
        self.kc.inspect("no_such_name_here", cursor_pos=5)
        reply = self.get_non_kernel_info_reply(timeout=10)
        self.assertFalse(reply["content"]["found"])

    def test_locals_and_values_like_the_prompt(self):
        """A cell's last line is its value, with the cell's locals; '_' keeps it."""
        self.flush_channels()
        reply, outputs = self.execute_helper("local a = 20\nlocal b = 22\na + b")
        results = [m for m in outputs if m["msg_type"] == "execute_result"]
        self.assertEqual(results[0]["content"]["data"]["text/plain"], "42")
        self.flush_channels()
        reply, outputs = self.execute_helper("_ + 1")
        results = [m for m in outputs if m["msg_type"] == "execute_result"]
        self.assertEqual(results[0]["content"]["data"]["text/plain"], "43")

    def test_cell_rules_are_the_prompts(self):
        """The prompt's cell rules (repl/cell.c): a last statement after ';'
        is the value, a local lasts for the session, name? asks help()."""
        self.flush_channels()
        reply, outputs = self.execute_helper("local kept = 5\nfunction six() return 6 end")
        self.assertEqual(reply["content"]["status"], "ok")
        reply, outputs = self.execute_helper("v = six(); kept + v")
        results = [m for m in outputs if m["msg_type"] == "execute_result"]
        self.assertEqual(results[0]["content"]["data"]["text/plain"], "11")
        reply, outputs = self.execute_helper("six??")
        text = "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream")
        self.assertIn("a Lua function defined at In[", text)
        self.assertIn("function six() return 6 end", text)
        reply, outputs = self.execute_helper("mf.matmul?")
        text = "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream")
        self.assertIn("mf.matmul(a, b [, {transpose_a, transpose_b}])", text)

    def test_completion_of_a_model(self):
        """A Sequential model offers its API: methods after ':' (fit, summary,
        evaluate), properties after '.' without '(', no private helper."""
        self.flush_channels()
        reply, _ = self.execute_helper(
            "cm = mf.layers.Sequential{mf.layers.Dense(2, {input_shape = {3}})}")
        self.assertEqual(reply["content"]["status"], "ok")

        def matches(text):
            self.kc.complete(text, len(text))
            return self.get_non_kernel_info_reply(timeout=10)["content"]["matches"]
        methods = matches("cm:")
        self.assertEqual(sorted(methods), [
            "cm:add(", "cm:add_weight(", "cm:build(", "cm:count_params(", "cm:evaluate(",
            "cm:fit(", "cm:load(", "cm:load_state_dict(", "cm:predict(", "cm:save(",
            "cm:state_dict(", "cm:summary("])
        self.assertEqual(sorted(matches("cm.")), [
            "cm.built", "cm.layers", "cm.name", "cm.non_trainable_variables", "cm.trainable",
            "cm.trainable_variables", "cm.variables"])
        self.assertEqual(matches("cm.trainable_v"), ["cm.trainable_variables"])
        self.assertEqual(matches("cm.su"), ["cm:summary("])
        self.assertEqual(matches("cm:apply"), [])

    def _displays(self, code):
        self.flush_channels()
        reply, outputs = self.execute_helper(code)
        self.assertEqual(reply["content"]["status"], "ok", reply["content"])
        return [m["content"]["data"] for m in outputs if m["msg_type"] == "display_data"]

    def test_imshow_and_hist_are_pictures(self):
        """mf.imshow and mf.hist show an SVG picture, their grey text as text/plain."""
        shown = self._displays("mf.imshow(mf.tensor{{{1, 0, 0}, {0, 1, 0}}, {{0, 0, 1}, {1, 1, 1}}})")
        self.assertEqual(len(shown), 1)
        self.assertIn('fill="#ff0000"', shown[0]["image/svg+xml"])
        self.assertIn('fill="#0000ff"', shown[0]["image/svg+xml"])
        self.assertEqual(shown[0]["text/plain"], ":#")   # the grey ramp, no escape codes
        shown = self._displays("mf.hist(mf.tensor{1, 2, 2, 3}, {bins = 2})")
        self.assertIn("<rect", shown[0]["image/svg+xml"])
        self.assertIn("[1, 2)", shown[0]["text/plain"])
        # print = false keeps the prompt's meaning: the text is the value
        self.flush_channels()
        reply, outputs = self.execute_helper("mf.imshow(mf.tensor{{{1, 1, 1}}}, {print = false, color = false})")
        results = [m for m in outputs if m["msg_type"] == "execute_result"]
        self.assertEqual(results[0]["content"]["data"]["text/plain"], "@")

    def test_summary_is_a_table(self):
        """model:summary() shows Keras's table as HTML (its text as text/plain)."""
        shown = self._displays("sm = mf.layers.Sequential{mf.layers.Dense(4, {input_shape = {3}}), "
                               "mf.layers.Dense(2)}\nsm:summary()")
        self.assertEqual(len(shown), 1)
        html = shown[0]["text/html"]
        self.assertIn('<table class="moonflow-summary"><caption>Model: &quot;sequential', html)
        self.assertIn("16", html)   # the first Dense: 3 * 4 + 4 parameters
        self.assertIn("Dense", shown[0]["text/plain"])
        # summary{print_fn} is the prompt's: it returns the text
        self.flush_channels()
        reply, outputs = self.execute_helper("#sm:summary{print_fn = function() end} > 0")
        results = [m for m in outputs if m["msg_type"] == "execute_result"]
        self.assertEqual(results[0]["content"]["data"]["text/plain"], "true")

    def test_schedule_is_a_table(self):
        """A session's Kahn schedule shows as a table of steps."""
        self.flush_channels()
        reply, outputs = self.execute_helper(
            "g = mf.Graph()\ng:as_default(function()\n  a = mf.placeholder('float32', {2})\n"
            "  out = mf.reduce_sum(a * 2)\nend)\nsess = mf.Session(g)\n"
            "v, sched = sess:run(out, {[a] = mf.tensor{1, 2}}, {schedule = true})\nsched")
        self.assertEqual(reply["content"]["status"], "ok", reply["content"])
        html = [m for m in outputs if m["msg_type"] == "execute_result"][0]["content"]["data"][
            "text/html"]
        self.assertIn("<th>step</th><th>node</th><th>op</th><th>in-degree</th>", html)
        self.assertIn("<p>fed: ", html)


if __name__ == "__main__":
    unittest.main()
