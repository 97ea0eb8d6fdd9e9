from evolving_agent.cli import main

main()
