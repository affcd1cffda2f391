"""Hermes terminal pack: ``terminal`` runs shell commands, ``process`` manages the background ones."""
