from stepswitch.cli.main import entry

entry()
