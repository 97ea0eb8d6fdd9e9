"""Prints a packing of 26 circles in the unit square: one "x y r" line per circle."""

# A 5 x 5 grid of equal circles, and one small circle in the gap between four of them.
R = 0.1
circles = [(R + 2 * R * i, R + 2 * R * j, R) for i in range(5) for j in range(5)]
gap = (2 * R * R) ** 0.5 - R
circles.append((2 * R, 2 * R, round(gap - 1e-6, 6)))

for x, y, r in circles:
    print(f"{x:.6f} {y:.6f} {r:.6f}")
