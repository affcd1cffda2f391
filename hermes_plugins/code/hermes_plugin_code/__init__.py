"""Hermes code pack: ``execute_code`` runs a Python script that can call the other Hermes tools."""
