from shuffledp.cli import main

main()
