"""From readings of the board to moves: the stabiliser and the move inference."""
