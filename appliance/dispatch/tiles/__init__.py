"""Vector map tiles for the tracking page: built with tilemaker into an MBTiles file and served."""
