"""``python -m drift_pipeline.evaluation.reader_figures``: re-measure the shipped reader figures.

Reads every labelled set in ``evaluation/data/`` with the careful reader (and the answer set with
the rule judge) and rewrites ``evaluation/data/reader_figures.json``, which the leaderboard
quotes. Run it after any change to the reader, and commit the file.
"""

import sys

from ._reader_figures import main

if __name__ == "__main__":
    sys.exit(main())
