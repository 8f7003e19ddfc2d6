"""``python -m recoeval_tracking``: the ``recoeval-track`` command."""

from recoeval_tracking.app.cli import main

if __name__ == "__main__":
    main()
