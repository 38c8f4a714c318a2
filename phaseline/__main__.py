from phaseline.cli import main

main()
