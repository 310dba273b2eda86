"""`xpeval` subcommands: one module per command, each exposing `register(subparsers)`.

The CLI discovers the modules here, so adding a command is adding a module.
"""
