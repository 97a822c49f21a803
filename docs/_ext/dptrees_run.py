"""``.. dptrees-run::`` - run Python code when the documentation is built, and show it
with what it printed.

Every figure under such a block comes from running it, not from typing it: the blocks
of one page run in order in one namespace, their standard output (and any dptrees
warning, e.g. a ``PrivacyLeakWarning``) is shown under the code, and a block that raises
fails the build.

Options: ``:hide-code:`` shows only the output.
"""

import contextlib
import io
import traceback
import warnings

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

_NAMESPACE = "dptrees_run_namespace"


class RunDirective(SphinxDirective):
    has_content = True
    option_spec = {"hide-code": directives.flag}

    def run(self):
        from dptrees import exceptions

        code = "\n".join(self.content)
        # env.temp_data is emptied after every document: one namespace per page
        namespace = self.env.temp_data.setdefault(_NAMESPACE, {"__name__": "__main__"})
        out = io.StringIO()

        def show(message, category, *args, **kwargs):
            out.write(f"{category.__name__}: {message}\n")

        with warnings.catch_warnings(), contextlib.redirect_stdout(out):
            warnings.simplefilter("ignore")
            for category in (exceptions.PrivacyLeakWarning, exceptions.EarlyStopWarning,
                             exceptions.WeakPrivacyWarning):
                warnings.simplefilter("always", category)
            warnings.showwarning = show
            try:
                exec(compile(code, f"<{self.env.docname}, line {self.lineno}>", "exec"),
                     namespace)
            except Exception:  # noqa: BLE001 - reported as a build error
                raise self.error("dptrees-run: the code raised\n"
                                 + traceback.format_exc()) from None
        result = []
        if "hide-code" not in self.options:
            source = nodes.literal_block(code, code, language="python")
            self.set_source_info(source)
            result.append(source)
        text = out.getvalue().rstrip("\n")
        if text:
            output = nodes.literal_block(text, text, language="none",
                                         classes=["dptrees-run-output"])
            self.set_source_info(output)
            result.append(output)
        return result


def setup(app):
    app.add_directive("dptrees-run", RunDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
