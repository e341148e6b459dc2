"""API knowledge of the C rules: sources of outside data, formats, commands, results."""

from __future__ import annotations

import re

INPUT_RETURN = {"getenv", "_wgetenv", "secure_getenv", "GetCommandLineA", "GetCommandLineW"}
RANDOM_RETURN = {"rand", "random", "lrand48", "mrand48"}
# name -> index of the first argument the call fills with outside data (-1: all after format)
INPUT_FILL = {
    "fgets": 0, "fgetws": 0, "gets": 0, "fread": 0, "read": 1, "recv": 1, "recvfrom": 1,
    "fscanf": -2, "fwscanf": -2, "scanf": -1, "wscanf": -1, "getline": 0,
}  # fmt: skip
FORMAT_ARG = {
    "printf": 0, "vprintf": 0, "wprintf": 0, "vwprintf": 0, "fprintf": 1, "vfprintf": 1,
    "fwprintf": 1, "vfwprintf": 1, "sprintf": 1, "vsprintf": 1, "syslog": 1, "dprintf": 1,
    "snprintf": 2, "_snprintf": 2, "vsnprintf": 2, "_vsnprintf": 2, "swprintf": 2,
    "_snwprintf": 2, "_vsnwprintf": 2, "vswprintf": 2, "err": 1, "warn": 0,
}  # fmt: skip
COMMANDS = {"system", "popen", "_popen", "_wsystem", "_wpopen", "execl", "execlp", "execle",
            "execv", "execvp", "_execl", "_execlp", "_wexecl", "_wexeclp", "_spawnl",
            "_wspawnl", "_execv", "_wexecv"}  # fmt: skip
CHECK_RESULT = {
    "fgets": 0.6, "fgetws": 0.6, "fread": 0.6, "fscanf": 0.6, "fwscanf": 0.6, "scanf": 0.6,
    "wscanf": 0.6, "sscanf": 0.6, "swscanf": 0.6, "remove": 0.6, "_wremove": 0.6,
    "rename": 0.6, "_wrename": 0.6, "setuid": 0.8, "setgid": 0.8, "seteuid": 0.8,
    "chdir": 0.6, "chroot": 0.8, "read": 0.6, "fwrite": 0.5, "write": 0.5, "fputs": 0.45,
    "fputws": 0.45, "fputc": 0.45, "fputwc": 0.45, "putc": 0.45, "putwc": 0.45,
    "puts": 0.45, "_putws": 0.45, "putchar": 0.45, "putwchar": 0.45,
}  # fmt: skip
MATCHING_RELEASE = {"malloc": "free", "calloc": "free", "realloc": "free", "strdup": "free",
                    "new": "delete", "new[]": "delete[]"}  # fmt: skip
_NONCAPTURE_RE = re.compile(
    r"^(?:print\w*|str\w*|wcs\w*|mem\w*|w?mem\w*|f?puts|fputws|_?putws|[fsv]*w?printf|"
    r"_?v?sn?w?printf|f?gets|fgetws|fread|fwrite|ato[il]|strto\w*|free|sizeof|\w*len|"
    r"fclose|fopen|recv|send|read|write)$"
)
_SECRET_NAME = re.compile(r"(?i)(passw|pwd\b|secret|api_?key|private_?key|token|credential)")
_RANDOM_NAME = re.compile(r"(?i)(key|token|nonce|salt|secret|passw|session|\biv\b)")
