import os
import sys

# `python -m stepswitch` puts the working directory first on sys.path, where an
# openai.py or http.py would shadow the modules stepswitch loads next; the console
# script does not, and neither does this. A TARGET's folder (and the working directory)
# is put on the path when the target itself is imported.
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from stepswitch.cli.main import entry

entry()
