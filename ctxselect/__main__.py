from ctxselect.cli.core import main

main()
