"""pytest plugin: write each test's outcome (and a failure's report) the moment it is known."""
import os

def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        with open(os.environ.get("FAILLOG", "/tmp/faillog.txt"), "a") as f:
            f.write(f"{report.nodeid} {report.when} {report.outcome} {report.duration:.1f}s\n")
            if report.outcome == "failed":
                f.write(str(report.longrepr)[-6000:] + "\n\n")
