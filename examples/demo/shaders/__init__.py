"""The guest programs' shaders: SM86 listings and GLSL sources, built into RomFS files by ``build``."""
