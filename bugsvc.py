#!/usr/bin/env python3
"""bugsvc: a bug tracker with a Bugzilla 5.x compatible REST interface.

    python bugsvc.py                 serve on http://127.0.0.1:8000/rest
    python bugsvc.py api-key EMAIL   print a new API key for an account
    python bugsvc.py backup PATH     copy the database to PATH while it serves
    python bugsvc.py deliver         deliver bug mail and webhook calls (--once: what is due)
    python bugsvc.py reset-failed-logins LOGIN_OR_ADDRESS ...
                                     check their sign-ins again at once
    python bugsvc.py --help          every option
"""

import os
import sys

from bugsvc.cli import main


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], os.environ))
