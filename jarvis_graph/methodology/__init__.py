"""Methodologies: reusable ways of solving a kind of problem, shared through git."""
