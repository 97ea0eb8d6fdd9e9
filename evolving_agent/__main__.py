from evolving_agent.launch import main

main()
