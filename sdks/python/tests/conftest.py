import os
import sys
from pathlib import Path

# The package from this checkout, unless the tests are to import an installed one (AGP_TEST_INSTALLED=1: the
# end-to-end run of test/e2e/python-sdk.test.ts installs the built wheel into a fresh virtual environment).
if not os.environ.get("AGP_TEST_INSTALLED"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
