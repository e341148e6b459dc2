"""API knowledge of the walk: sources of outside data, and calls that keep no argument."""

from __future__ import annotations

import re

INPUT_RETURN = {"getenv", "_wgetenv", "secure_getenv", "GetCommandLineA", "GetCommandLineW"}
RANDOM_RETURN = {"rand", "random", "lrand48", "mrand48"}
# name -> index of the first argument the call fills with outside data (-1: all after format)
INPUT_FILL = {
    "fgets": 0, "fgetws": 0, "gets": 0, "fread": 0, "read": 1, "recv": 1, "recvfrom": 1,
    "fscanf": -2, "fwscanf": -2, "scanf": -1, "wscanf": -1, "getline": 0,
}  # fmt: skip
_NONCAPTURE_RE = re.compile(
    r"^(?:print\w*|str\w*|wcs\w*|mem\w*|w?mem\w*|f?puts|fputws|_?putws|[fsv]*w?printf|"
    r"_?v?sn?w?printf|f?gets|fgetws|fread|fwrite|ato[il]|strto\w*|free|sizeof|\w*len|"
    r"fclose|fopen|recv|send|read|write)$"
)
