"""What only the bundled TSP example needs (its files are package data under
``evolving_agent/data/examples/tsp``): the solver templates the ``tsp-example`` agent
writes (``solver``).  Nothing else in search imports this package but that agent."""
