"""Maxwell SM53 (Switch 1, Tegra X1): instruction table, decoder, assembler, SPIR-V lowering."""
