"""Built-in problems, one module each. `problems.registry` discovers every Problem subclass here."""
