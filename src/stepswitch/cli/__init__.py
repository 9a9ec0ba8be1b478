"""The command-line interface. Not API: use ``stepswitch.cli.main.main(argv)``."""
