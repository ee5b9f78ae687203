"""The README's Python examples run as written (doctest: each >>> line prints what the
README shows)."""
import doctest
import os
import re

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def test_the_readmes_python_examples_print_what_it_shows():
    with open(README) as f:
        text = f.read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "the README has no Python example"
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(verbose=False)
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, {}, "README block %d" % i, README, 0)
        assert test.examples, "README block %d has no >>> example" % i
        runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted >= 8 and failed == 0, (failed, attempted)


def test_the_packages_docstring_examples_hold():
    import once
    failed, attempted = doctest.testmod(once, verbose=False, report=True)
    assert attempted >= 5 and failed == 0, (failed, attempted)
