import sys

from runner.judge.main import main

sys.exit(main())
