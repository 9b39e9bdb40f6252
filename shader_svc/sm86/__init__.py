"""SM86 (Ampere) encoding: table, decoder, text."""
