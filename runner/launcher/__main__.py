import sys

from runner.launcher.main import main

sys.exit(main())
