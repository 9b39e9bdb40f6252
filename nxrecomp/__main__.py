import sys

from nxrecomp.cli import main

sys.exit(main())
