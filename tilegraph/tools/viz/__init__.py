"""``tilegraph-viz``: the graph as a picture.

- :mod:`.cli`: the program;
- :mod:`.picture`: the graph as nodes and clusters; Mermaid and DOT text;
- :mod:`.svg`: the SVG / PNG drawing.
"""
