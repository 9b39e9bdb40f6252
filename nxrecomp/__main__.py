import sys

from nxrecomp.app.cli import main

sys.exit(main())
