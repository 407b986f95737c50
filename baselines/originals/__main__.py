import sys

from baselines.originals.runner import main

sys.exit(main())
